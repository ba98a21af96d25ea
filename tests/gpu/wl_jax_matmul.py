"""GPU workload: a JAX MLP training step in bf16 (jnp.dot + grad, jit), whose GEMMs XLA hands to cuBLAS.

Three dense layers (1024 -> 4096 -> 4096 -> 1024) with GELU on a batch of 2048 rows, a mean-square
loss, its gradient and an SGD update in one jitted step: 9 GEMMs a step (3 forward, 6 backward).
XLA can emit its own GEMM kernels (Triton) instead of calling cuBLAS; unless XLA_FLAGS already says
otherwise, this workload sets --xla_gpu_enable_triton_gemm=false so that the GEMMs are cuBLAS or
cuBLASLt calls, loaded by XLA with dlopen and resolved with dlsym. Imports no PyTorch. Prints
`RESULT jax_matmul ms_per_iter=... checksum=...` (checksum: sum of the losses of all steps); exits
77 without JAX or without a GPU.
"""

import os

import wl_common
from wl_jax_conv import import_jax


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=2048, help="rows per step (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    if "xla_gpu_enable_triton_gemm" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_gpu_enable_triton_gemm=false").strip()
    jax, jnp, _ = import_jax()  # after XLA_FLAGS: XLA reads them as it starts
    wl_common.log("XLA_FLAGS=%s" % os.environ["XLA_FLAGS"])

    dims = (1024, 4096, 4096, 1024)
    keys = jax.random.split(jax.random.PRNGKey(1234), len(dims))
    params = [(jax.random.normal(keys[i], (din, dout), jnp.float32) * (1.0 / din) ** 0.5)
              .astype(jnp.bfloat16) for i, (din, dout) in enumerate(zip(dims, dims[1:]))]
    x = jax.random.normal(keys[-1], (args.batch, dims[0]), jnp.float32).astype(jnp.bfloat16)

    def loss_fn(params, x):
        for i, w in enumerate(params):
            x = jnp.dot(x, w, preferred_element_type=jnp.float32).astype(jnp.bfloat16)
            if i + 1 < len(params):
                x = jax.nn.gelu(x)
        return jnp.mean(jnp.square(x.astype(jnp.float32)))

    @jax.jit
    def train_step(params, x):
        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        return [(w - 0.01 * g).astype(jnp.bfloat16) for w, g in zip(params, grads)], loss

    ms, checksum = wl_common.jax_train_loop(jax, train_step, params, x, args.iters, args.warmup)
    wl_common.print_result("jax_matmul", ms, checksum)


if __name__ == "__main__":
    main()
