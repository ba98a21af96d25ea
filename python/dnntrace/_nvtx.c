/*
 * _nvtx.c - the dnntrace Python module's regions, as NVTX ranges.
 *
 * A Region pushes an NVTX range of its name on entry and pops it on exit,
 * in NVTX's default domain, where torch.cuda.nvtx puts its ranges: the
 * tool NVTX loads (dnntrace's shim, Nsight Systems) sees them. NVTX v3 is
 * header-only: without a tool, its first call finds none and points every
 * function at a no-op, so a region costs what calling a C method costs.
 * This file records nothing itself, and knows nothing of the trace format.
 *
 * Built against Python's stable ABI (3.8 and later), so that one wheel
 * serves every Python, as its programs do.
 */
#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first, as Python asks; it defines _GNU_SOURCE */

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

typedef struct {
	PyObject_HEAD
	PyObject *name;   /* str, as given */
	PyObject *utf8;   /* bytes: what NVTX is handed */
	const char *cstr; /* inside utf8 */
} Region;

static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "name", NULL };
	PyObject *name, *utf8;
	Region *self;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "U:region", kwlist, &name))
		return NULL;
	utf8 = PyUnicode_AsUTF8String(name);
	if (!utf8)
		return NULL;
	self = (Region *)PyType_GenericNew(type, NULL, NULL);
	if (!self) {
		Py_DECREF(utf8);
		return NULL;
	}
	Py_INCREF(name);
	self->name = name;
	self->utf8 = utf8;
	self->cstr = PyBytes_AsString(utf8);
	return (PyObject *)self;
}

static void region_dealloc(PyObject *obj)
{
	PyTypeObject *type = Py_TYPE(obj);
	Region *self = (Region *)obj;
	freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);

	Py_XDECREF(self->name);
	Py_XDECREF(self->utf8);
	tp_free(obj);
	Py_DECREF(type); /* instances of heap types hold their type */
}

/* A region holds no state of its own between entry and exit (NVTX keeps a
 * stack per thread), so one object may be entered by several threads, or
 * again by a recursive call. */
static PyObject *region_enter(PyObject *obj, PyObject *unused)
{
	(void)unused;
	nvtxRangePushA(((Region *)obj)->cstr);
	Py_INCREF(obj);
	return obj;
}

static PyObject *region_exit(PyObject *obj, PyObject *exc)
{
	(void)obj;
	(void)exc;
	nvtxRangePop();
	Py_RETURN_FALSE; /* an exception raised inside goes on */
}

static PyObject *region_get_name(PyObject *obj, void *closure)
{
	(void)closure;
	Py_INCREF(((Region *)obj)->name);
	return ((Region *)obj)->name;
}

static PyMethodDef region_methods[] = {
	{ "__enter__", region_enter, METH_NOARGS, "push the range" },
	{ "__exit__", region_exit, METH_VARARGS, "pop the range" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef region_getset[] = {
	{ "name", region_get_name, NULL, "the range's name", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot region_slots[] = {
	{ Py_tp_new, region_new },
	{ Py_tp_dealloc, region_dealloc },
	{ Py_tp_methods, region_methods },
	{ Py_tp_getset, region_getset },
	{ Py_tp_doc, "Region(name): an NVTX range, pushed on entry, popped "
		     "on exit." },
	{ 0, NULL },
};

static PyType_Spec region_spec = {
	.name = "dnntrace._nvtx.Region",
	.basicsize = sizeof(Region),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.slots = region_slots,
};

/* The shim says whether it records this process; where it is not loaded,
 * nothing is recorded. Found by name, so that this module needs the shim
 * neither to build nor to load. */
static PyObject *recording(PyObject *mod, PyObject *unused)
{
	int (*shim_recording)(void);

	(void)mod;
	(void)unused;
	*(void **)&shim_recording = dlsym(RTLD_DEFAULT, "dnntrace_recording");
	return PyBool_FromLong(shim_recording && shim_recording());
}

static PyMethodDef module_methods[] = {
	{ "recording", recording, METH_NOARGS,
	  "recording() -> bool: whether dnntrace records this process" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "dnntrace._nvtx",
	.m_doc = "NVTX ranges for dnntrace's regions",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__nvtx(void)
{
	PyObject *mod = PyModule_Create(&module_def);
	PyObject *type;

	if (!mod)
		return NULL;
	type = PyType_FromSpec(&region_spec);
	if (!type || PyModule_AddObject(mod, "Region", type) < 0) {
		Py_XDECREF(type);
		Py_DECREF(mod);
		return NULL;
	}
	return mod;
}
