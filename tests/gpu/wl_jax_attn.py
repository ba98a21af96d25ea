"""GPU workload: JAX attention through cuDNN, forward + backward (jax.nn.dot_product_attention).

implementation="cudnn" makes XLA run the attention as a cuDNN graph (flash attention), which XLA
builds, serializes and restores through its own cache: the plans an execution uses may never be
built in the process. bf16, causal, one jitted step with the gradient of a mean-square loss.
This workload imports no PyTorch. Prints `RESULT jax_attn ms_per_iter=... checksum=...` (checksum:
sum of the losses of all steps); exits 77 without JAX, without a GPU or before sm80.
"""

import wl_common
from wl_jax_conv import import_jax


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=4, help="batch (default %(default)s)")
        p.add_argument("--heads", type=int, default=16, help="heads (default %(default)s)")
        p.add_argument("--seq", type=int, default=1024, help="sequence length (default %(default)s)")
        p.add_argument("--head-dim", type=int, default=64, help="head dimension (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    jax, jnp, _ = import_jax()
    cc = getattr(jax.devices("gpu")[0], "compute_capability", "8.0")
    if float(cc) < 8.0:
        wl_common.skip("cuDNN attention needs sm80 or newer")
    keys = jax.random.split(jax.random.PRNGKey(1234), 3)
    shape = (args.batch, args.seq, args.heads, args.head_dim)  # B T N H
    q, k, v = (jax.random.normal(key, shape, jnp.bfloat16) for key in keys)

    def loss_fn(q, k, v):
        out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="cudnn")
        return jnp.mean(jnp.square(out.astype(jnp.float32)))

    grad_fn = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1, 2)))
    losses = []
    state = {}

    def step():
        loss, grads = grad_fn(q, k, v)
        state["last"] = grads
        losses.append(loss)

    def sync():
        jax.block_until_ready(state["last"])

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, sync)
    wl_common.print_result("jax_attn", ms, sum(float(x) for x in losses))


if __name__ == "__main__":
    main()
