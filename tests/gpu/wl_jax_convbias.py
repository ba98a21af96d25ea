"""GPU workload: JAX convolution + bias + ReLU that XLA fuses into one cuDNN call, inference.

Three 3x3 convolutions, each followed by a bias add and ReLU, in NHWC/HWIO, bf16, jitted. XLA
rewrites convolution + bias + activation into one fused cuDNN convolution (a graph of several
operations, whose plan it may restore from its autotuning cache). This workload imports no
PyTorch. Prints `RESULT jax_convbias ms_per_iter=... checksum=...` (checksum: sum of the outputs of
all steps); exits 77 without JAX or without a GPU.
"""

import wl_common
from wl_jax_conv import import_jax


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=32, help="images per step (default %(default)s)")
        p.add_argument("--size", type=int, default=56, help="image height and width (default %(default)s)")
        p.add_argument("--channels", type=int, default=64, help="channels (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    jax, jnp, lax = import_jax()
    c = args.channels
    keys = jax.random.split(jax.random.PRNGKey(1234), 7)
    weights = [(jax.random.normal(keys[2 * i], (3, 3, c, c), jnp.float32) * (2.0 / (9 * c)) ** 0.5)
               .astype(jnp.bfloat16) for i in range(3)]
    biases = [(jax.random.normal(keys[2 * i + 1], (c,), jnp.float32) * 0.1).astype(jnp.bfloat16)
              for i in range(3)]
    images = jax.random.normal(keys[6], (args.batch, args.size, args.size, c), jnp.bfloat16)

    @jax.jit
    def forward(x):
        for w, b in zip(weights, biases):
            x = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x + b)
        return jnp.sum(x.astype(jnp.float32))

    sums = []

    def step():
        sums.append(forward(images))

    def sync():
        jax.block_until_ready(sums[-1])

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, sync)
    wl_common.print_result("jax_convbias", ms, sum(float(x) for x in sums))


if __name__ == "__main__":
    main()
