/*
 * analyzer-cudnn-backend.c - the cuDNN decoder's backend API: descriptors
 * created, set, read back and finalized (cudnnBackend*), engine configs
 * and plans worked out from them, plans restored from JSON, and the
 * executions of plans as ops. The legacy API and the descriptors' store
 * are analyzer-cudnn-model.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "analyzer-cudnn-model.h"

/* The variant pack's data pointers into p->ptrs, by uid; *ws its
 * workspace. */
static void varpack_pointers(struct cudnn_model *m, uint64_t varpack,
			     struct pending *p, uint64_t *ws)
{
	struct obj *vp = m_obj_find(m, varpack, false);
	struct battr *uids = vp ? m_battr(vp, m->a_vp_uids) : NULL;
	uint32_t n = uids ? uids->bytes / 8 : 0;

	*ws = vp ? m_battr_ptr(vp, m->a_vp_ws, 0) : 0;
	if (!n || !m_op_ptrs_room(p, n))
		return;
	for (uint32_t i = 0; i < n; i++) {
		int64_t uid;
		memcpy(&uid, bdata(uids) + i * 8, 8);
		p->ptrs[i] =
			(struct dt_op_ptr){ uid, NULL, 0,
					    m_battr_ptr(vp, m->a_vp_ptrs, i) };
	}
}

static void plan_op(struct cudnn_model *m, struct pending *p,
		    struct plan_info *pi);

void m_backend_execute(struct cudnn_model *m, const struct dt_rec_api_call *c,
		       const struct dt_api_def *api, const struct dt_arg *args,
		       int n, bool captured)
{
	uint64_t plan = 0, varpack = 0, stream = 0;

	for (int i = 0; i < n; i++) {
		const struct dt_arg *a = &args[i];
		if (a->name_len == 13 && !memcmp(a->name, "executionPlan", 13))
			plan = a->u;
		else if (a->name_len == 11 &&
			 !memcmp(a->name, "variantPack", 11))
			varpack = a->u;
		else if (is_handle(a)) {
			struct obj *h = m_obj_find(m, a->u, false);
			stream = h ? h->stream : 0;
		}
	}
	struct obj *po = m_obj_find(m, plan, false);
	struct plan_info *pi = po ? po->plan : NULL;
	struct pending *p = m_op_new(m->core, c, api->name,
				     "plan=? (not finalized in this trace)");
	if (!p)
		return;
	p->op.stream = stream;
	/* cudnnBackendPopulateCudaGraph, UpdateCudaGraph: graph nodes */
	if (captured) {
		p->op.origin = DT_OP_CAPTURED;
		m_stats(m->core)->graphs.captured++;
	}
	if (m_pointers(m->core))
		varpack_pointers(m, varpack, p, &p->op.workspace_ptr);
	if (pi) {
		plan_op(m, p, pi);
	} else {
		/* finalized on another thread, whose records may come later */
		m_op_wait(m->core, p, plan);
	}
}

/* The plan of a backend execution: its description, engine, workspace,
 * graph and cost. */
static void plan_op(struct cudnn_model *m, struct pending *p,
		    struct plan_info *pi)
{
	struct cfg_info *cfg = pi->cfg;

	pi->executions++;
	/* the program may have read the knobs after building the plan */
	if (cfg && !cfg->knobs)
		m_knobs_read(m, cfg, pi->cfg_ptr);
	if (!cfg || !cfg->graph)
		m_stats(m->core)->plans.unknown_runs++;
	p->desc = m_plan_desc(m, pi);
	p->op.plan = pi->id;
	p->op.workspace = pi->workspace;
	if (!cfg)
		return;
	p->op.knobs = cfg->knobs;
	p->recipe = (struct dt_recipe){ cfg->nodes,   cfg->n_nodes,
					cfg->knob_kv, cfg->n_knob_kv,
					cfg->note_kv, cfg->n_note_kv };
	p->recipe.build = cfg->bp;
	p->op.notes = cfg->notes;
	p->op.engine = cfg->engine;
	p->op.cost = cfg->cost;
	p->problem = cfg->graph;
	p->brief = cfg->brief;
	p->tensors = &cfg->tensors;
	if (cfg->notes) {
		p->op.tensor_cores = 0;
		for (uint32_t i = 0; i < cfg->n_note_kv; i++)
			if (!strcmp(cfg->note_kv[i].name, "TENSOR_CORE"))
				p->op.tensor_cores = 1;
	}
}

/* A plan finalized at seq: executions of its address that were called
 * after that but read before it (another thread's records) are its. */
struct late {
	struct cudnn_model *m;
	struct plan_info *pi;
};

static void plan_late_op(void *arg, struct pending *p)
{
	struct late *l = arg;

	plan_op(l->m, p, l->pi);
}

static void plan_late(struct cudnn_model *m, uint64_t ptr, uint64_t seq,
		      struct plan_info *pi)
{
	struct late l = { m, pi };

	m_ops_waited(m->core, ptr, seq, plan_late_op, &l);
}

/* A plan restored from its JSON representation (or whose JSON was read
 * back): what the JSON says becomes the plan's, as if it had been built. */
static void restore(struct cudnn_model *m, struct obj *plan)
{
	struct plan_info *pi = plan->plan;
	const struct battr *json = m_battr(plan, m->a_plan_json);
	uint64_t handle = m_battr_ptr(plan, m->a_plan_handle, 0);
	char why[256];

	if (!pi->cfg && !(pi->cfg = m_new_cfg(m)))
		return;
	if (!m_restore_plan(m, pi->cfg, bdata(json), json->bytes, handle, why,
			    sizeof(why))) {
		m_stats(m->core)->plans.restored++;
		pi->no_graph = NULL;
	} else {
		m_stats(m->core)->plans.opaque++;
		pi->no_graph = m_keep(m->core, strdup(why));
	}
}

/* What finalizing a tensor, an operation (or what it points to) or an
 * operation graph makes of it: the tensor normalized, the others
 * described as they are now. False for other descriptors. */
bool m_finalize_desc(struct cudnn_model *m, struct obj *o)
{
	if (o->btype == m->bt_tensor) {
		m_backend_tensor(m, o);
	} else if (m_snapshot_type(m, o->btype)) {
		struct dt_sbuf b = { 0 };
		struct tlist j = { 0 };
		free(o->snap);
		m_tlist_free(&o->snap_tensors);
		free(o->part);
		o->snap = NULL; /* describe what it points to, not this */
		m_describe_battrs(m, &b, &j, o, 1);
		o->snap = dt_sb_take(&b);
		o->snap_tensors = j;
		o->part = m_cost_part(m, o);
		free(o->bp);
		o->bp = NULL; /* made of what it points to, not of itself */
		o->bp = m_blueprint(m, o);
	} else if (o->btype == m->bt_graph) {
		free(o->graph);
		m_tlist_free(&o->graph_tensors);
		o->graph = m_describe_graph(m, o, &o->graph_tensors, &o->cost);
		free(o->brief);
		o->brief = m_graph_brief(m, o);
		free(o->bp);
		o->bp = NULL;
		o->bp = m_blueprint(m, o);
	} else {
		return false;
	}
	return true;
}

void m_backend_call(struct cudnn_model *m, const struct dt_rec_api_call *c,
		    enum api_class cls, struct dt_arg *args, int n)
{
	bool ok = c->status == 0;

	if (cls == API_BK_CREATE && n == 2 && ok) {
		struct obj *o = m_obj_new(m, args[1].u);
		if (o) {
			o->btype = args[0].i;
		}
	} else if (cls == API_BK_DESTROY && n == 1) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		/* an engine config read back from a plan: keep its knobs */
		if (o && o->btype == m->bt_cfg && o->cfg && !o->cfg->knobs)
			m_knobs_read(m, o->cfg, o->ptr);
		if (o)
			m_obj_remove(m, o);
	} else if (cls == API_BK_SET && n == 5 && ok) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		if (o && o->btype >= 0)
			m_set_battr(m, o, args[1].i, args[2].i, args[4].data,
				    args[4].count);
	} else if (cls == API_BK_GET && n == 6 && ok) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		if (!o || o->btype < 0)
			return;
		m_set_battr(m, o, args[1].i, args[2].i, args[5].data,
			    args[5].count);
		int64_t attr = args[1].i;
		if (attr == m->a_cfg_knobs) {
			/* the knob descriptors cuDNN filled in belong to this
			 * config: reading their values completes its knobs */
			for (uint32_t i = 0; i < args[5].count / 8; i++) {
				struct obj *k = m_obj_find(
					m, m_battr_ptr(o, attr, i), false);
				if (k)
					k->owner = o->ptr;
			}
		} else if ((attr == m->a_knob_value ||
			    attr == m->a_knob_type) &&
			   o->owner) {
			struct obj *cfg = m_obj_find(m, o->owner, false);
			if (cfg && cfg->cfg)
				m_knobs_read(m, cfg->cfg, cfg->ptr);
		} else if (attr == m->a_heur_results) {
			/* engine configs cuDNN filled in: they run this graph
			 */
			struct obj *g = m_obj_find(
				m, m_battr_ptr(o, m->a_heur_graph, 0), false);
			for (uint32_t i = 0; i < args[5].count / 8; i++) {
				struct obj *cfg = m_obj_find(
					m, m_battr_ptr(o, attr, i), false);
				if (!cfg)
					continue;
				cfg->cfg = m_new_cfg(m);
				m_copy_graph(m, cfg->cfg, g);
			}
		} else if (attr == m->a_cfg_engine) {
			/* the engine read back shares the config's knowledge */
			struct obj *e =
				m_obj_find(m, m_battr_ptr(o, attr, 0), false);
			if (e)
				e->cfg = o->cfg;
		} else if (attr == m->a_engine_index && o->cfg) {
			o->cfg->engine = m_battr_i64(o, attr, -1);
		} else if (attr == m->a_engine_notes && o->cfg) {
			/* ops may point to the old notes: they stay */
			m_notes_read(m, o->cfg, o, attr);
		} else if (attr == m->a_plan_json && o->plan &&
			   !o->plan->no_graph &&
			   (!o->plan->cfg || !o->plan->cfg->graph)) {
			/* the JSON of a plan whose graph the trace lacks */
			restore(m, o);
		} else if (attr == m->a_plan_ws && o->plan) {
			o->plan->workspace = m_battr_i64(o, attr, -1);
		} else if (attr == m->a_plan_cfg && o->plan) {
			/* the plan's engine config, read back (dnntrace does
			 * this once per plan): what is learned through it is
			 * the plan's */
			struct obj *cfg =
				m_obj_find(m, m_battr_ptr(o, attr, 0), false);
			if (cfg && !o->plan->cfg)
				o->plan->cfg = m_new_cfg(m);
			if (cfg)
				cfg->cfg = o->plan->cfg;
		}
	} else if (cls == API_BK_FINALIZE && n == 1 && ok) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		if (!o || o->btype < 0)
			return;
		if (m_finalize_desc(m, o)) {
			/* a tensor, an operation or a graph: described */
		} else if (o->btype == m->bt_engine) {
			struct obj *g = m_obj_find(
				m, m_battr_ptr(o, m->a_engine_graph, 0), false);
			o->cfg = m_new_cfg(m);
			if (o->cfg)
				o->cfg->engine =
					m_battr_i64(o, m->a_engine_index, -1);
			m_copy_graph(m, o->cfg, g);
		} else if (o->btype == m->bt_cfg) {
			struct obj *e = m_obj_find(
				m, m_battr_ptr(o, m->a_cfg_engine, 0), false);
			if (e && e->cfg)
				o->cfg = e->cfg;
			/* its knob choices, while they are alive */
			if (o->cfg && !o->cfg->knobs)
				m_knobs_read(m, o->cfg, o->ptr);
		} else if (o->btype == m->bt_plan) {
			struct obj *cfg = m_obj_find(
				m, m_battr_ptr(o, m->a_plan_cfg, 0), false);
			struct plan_info *pi = calloc(1, sizeof(*pi));
			if (!pi)
				return;
			pi->id = ++m->n_plans;
			pi->cfg = cfg ? cfg->cfg : NULL;
			pi->cfg_ptr = cfg ? cfg->ptr : 0;
			pi->workspace = m_battr_i64(o, m->a_plan_ws, -1);
			pi->next = m->plans;
			m->plans = pi;
			o->plan = pi;
			if (cfg)
				m_stats(m->core)->plans.built++;
			else if (m_battr(o, m->a_plan_json))
				restore(m, o);
			plan_late(m, o->ptr, c->seq, pi);
			struct dt_plan_build b = {
				.plan = pi->id,
				.problem = pi->cfg ? pi->cfg->graph : NULL,
				.brief = pi->cfg ? pi->cfg->brief : NULL,
				.kind = pi->cfg ? pi->cfg->cost.kind
						: DT_KIND_OTHER,
				.t = c->t_begin,
				.host_ns = c->t_end - c->t_begin,
				.restored = !cfg,
				.build = pi->cfg ? pi->cfg->bp : NULL,
			};
			m_emit_plan(m->core, &b);
		}
	}
}
