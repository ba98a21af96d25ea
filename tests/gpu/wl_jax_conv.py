"""GPU workload: a JAX convolution training step (lax.conv_general_dilated + grad, jit).

Three 3x3 convolutions with ReLU in NHWC/HWIO, a mean-square loss, its gradient and an SGD update,
all in one jitted step. XLA lowers the convolutions to cuDNN, which it loads with dlopen and
resolves with dlsym(handle, ...): a tracer that only interposes symbols misses those calls.
This workload imports no PyTorch, so only JAX's cuDNN is in the process. Prints
`RESULT jax_conv ms_per_iter=... checksum=...` (checksum: sum of the losses of all steps); exits 77
without JAX or without a GPU.
"""

import wl_common


def import_jax():
    """Return (jax, jnp, lax) with a GPU backend, or exit 77."""
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError as e:
        wl_common.skip("JAX is not installed (%s)" % e)
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        wl_common.skip("JAX finds no GPU (%s)" % e)
    if not gpus:
        wl_common.skip("JAX finds no GPU")
    wl_common.log("jax %s on %s" % (jax.__version__, gpus[0].device_kind))
    return jax, jnp, lax


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=32, help="images per step (default %(default)s)")
        p.add_argument("--size", type=int, default=64, help="image height and width (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    jax, jnp, lax = import_jax()

    channels = (3, 32, 64, 64)
    keys = jax.random.split(jax.random.PRNGKey(1234), len(channels))
    params = [jax.random.normal(keys[i], (3, 3, cin, cout), jnp.float32) * (2.0 / (9 * cin)) ** 0.5
              for i, (cin, cout) in enumerate(zip(channels, channels[1:]))]
    images = jax.random.normal(keys[-1], (args.batch, args.size, args.size, channels[0]), jnp.float32)

    def loss_fn(params, x):
        for w in params:
            x = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x)
        return jnp.mean(jnp.square(x))

    @jax.jit
    def train_step(params, x):
        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        return [w - 0.01 * g for w, g in zip(params, grads)], loss

    ms, checksum = wl_common.jax_train_loop(jax, train_step, params, images, args.iters, args.warmup)
    wl_common.print_result("jax_conv", ms, checksum)


if __name__ == "__main__":
    main()
