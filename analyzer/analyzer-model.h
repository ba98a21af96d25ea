/*
 * analyzer-model.h - the model behind a session: its library-neutral core,
 * and a decoder per library that core hands calls to. Private to
 * analyzer/: views see the model only through the session's events.
 */
#ifndef DT_ANALYZER_MODEL_H
#define DT_ANALYZER_MODEL_H

#include "dt-session.h"

struct dt_model;

/* A model for one trace; fi must outlive it. Ops carry their device
 * pointers when `pointers`. */
struct dt_model *dt_model_new(const struct dt_file_info *fi);
void dt_model_set_pointers(struct dt_model *m, bool on);
void dt_model_free(struct dt_model *m);

/* Who gets the events: n consumers at c (kept, not copied). */
void dt_model_consumers(struct dt_model *m, const struct dt_consumer *c, int n);

/* Replay one record, in file order, handing out its events and the ops
 * that are ready. */
void dt_model_feed(struct dt_model *m, const struct dt_rec_hdr *rec);

/* The trace has ended: hand out every op still waiting for kernels. */
void dt_model_finish(struct dt_model *m);

const struct dt_model_stats *dt_model_stats(const struct dt_model *m);

#endif /* DT_ANALYZER_MODEL_H */
