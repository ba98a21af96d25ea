/*
 * shim-asan.c - a program built with -fsanitize=address that calls cuDNN
 * (no GPU needed): recording it must neither stop AddressSanitizer (its
 * runtime must come first among the libraries loaded) nor lose calls.
 * Prints the LD_PRELOAD it was given.
 */
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	cudnnTensorDescriptor_t t;
	const char *preload = getenv("LD_PRELOAD");
	int *heap = malloc(4 * sizeof(*heap)); /* AddressSanitizer's malloc */

	if (!heap || cudnnCreateTensorDescriptor(&t) ||
	    cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
				       1, 2, 3, 4) ||
	    cudnnDestroyTensorDescriptor(t))
		return 1;
	free(heap);
	printf("LD_PRELOAD=%s\n", preload ? preload : "");
	return 0;
}
