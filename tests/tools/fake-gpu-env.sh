# Sourced by the tests that replay on the stand-in GPU (fake-gpu.c): with
# $fake (the stand-in library) and $dir (the test's folder) set, the
# stand-in first on the loader's path under the names replay loads
# (CUDA's driver, cuDNN, CUPTI), and its engine 1 the fast one.
mkdir "$dir/lib"
ln -s "$fake" "$dir/lib/libcuda.so.1" && ln -s "$fake" "$dir/lib/libcudnn.so.9" &&
	ln -s "$fake" "$dir/lib/libcupti.so.13" || exit 2
LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
FAKE_FAST=1
export LD_LIBRARY_PATH FAKE_FAST
