/*
 * dtt-prog.c - a program of both dtt and cuDNN, for test-dtt.sh: each dtt
 * function once, dttCheckBackend (which calls cuDNN) and dttScale (one
 * problem, before and after its workspace is asked) twice, and cuDNN
 * called directly too. Prints what it got.
 */
#include <cudnn.h>
#include <stdio.h>

#include "dtt.h"

int main(void)
{
	dttHandle_t h;
	/* CUDA's per-thread default stream (cudaStreamPerThread): the shim
	 * hands a call's stream to CUDA where a GPU is, so it must be one */
	dttStream_t s = (dttStream_t)(size_t)0x2, got = NULL;
	float alpha = 2.0f, x[4] = { 1, 2, 3, 4 }, y[4];
	size_t ws = 0, backend = 0;
	cudnnTensorDescriptor_t t;

	if (dttCreate(&h) || dttSetStream(h, s) || dttGetStream(h, &got) ||
	    got != s || dttScale(h, 4, &alpha, x, y) || y[3] != 8.0f ||
	    dttGetWorkspaceSize(h, 4, &ws) || dttScale(h, 4, &alpha, x, y) ||
	    dttCheckBackend(h, &backend) || dttCheckBackend(h, &backend)) {
		fprintf(stderr, "dtt-prog: a dtt call failed\n");
		return 1;
	}
	if (cudnnCreateTensorDescriptor(&t) ||
	    cudnnDestroyTensorDescriptor(t)) {
		fprintf(stderr, "dtt-prog: a cuDNN call failed\n");
		return 1;
	}
	printf("dtt %zu, workspace %zu, cuDNN %zu = %zu\n", dttGetVersion(), ws,
	       backend, cudnnGetVersion());
	return dttDestroy(h) != DTT_STATUS_SUCCESS;
}
