/* ui/panels/ranks_predicted.h - the model's figure beside the lab's race of
 * 1 rank against N (ui/text/run.c's ranks_race), labelled predicted: the
 * same prediction `nnlab sweep --ranks` sets beside a cell
 * (nn_ranks_predict_here: the ranks sharing this host's cores, this CPU
 * calibrated at a rank's threads, over the shared-memory link profile).
 * The calibration at a rank's threads is read from the cache, or measured
 * once both lanes have finished (never beside them: it would slow them;
 * not after a race that failed or was cancelled) by a calibration job,
 * cached under its thread count. */
#ifndef NNLAB_UI_RANKS_PREDICTED_H
#define NNLAB_UI_RANKS_PREDICTED_H

#include "lab_state.h"
#include "nnlab/link.h"

enum ui_ranks_pred_state {
    UI_RP_NONE,                      /* not a race of ranks */
    UI_RP_WAITING,                   /* for the race to end (its calibration not cached) */
    UI_RP_CALIBRATING,               /* this CPU at a rank's threads */
    UI_RP_DONE,
    UI_RP_FAILED                     /* why says */
};

typedef struct ui_ranks_pred {
    int state;                       /* enum ui_ranks_pred_state */
    int ranks, rank_batch, overlap;
    int threads;                     /* each rank's */
    double timeshare;
    nn_job *calib;                   /* the calibration at threads, while it runs */
    nn_job *leftover;                /* one cancelled by leaving the run, still ending (a
                                        calibration cannot stop part way): freed once it
                                        ended, or before the next run starts */
    nn_ranks_prediction pred;
    char link[NN_NAME_LEN];
    char why[NN_ERR_LEN];
} ui_ranks_pred;

/* At a run's start: armed for a race of ranks, else UI_RP_NONE. */
void ui_ranks_pred_start(ui_lab *lab, ui_ranks_pred *rp);
/* Moves it on (the race ended, the calibration ended); 1 when it changed. */
int ui_ranks_pred_poll(ui_lab *lab, ui_ranks_pred *rp);
/* Cancels its calibration job without waiting for it (kept as the
 * leftover); back to UI_RP_NONE. */
void ui_ranks_pred_stop(ui_ranks_pred *rp);
/* Waits for and frees a leftover calibration: before a run starts, so that
 * none runs beside it, and when the lab closes. */
void ui_ranks_pred_settle(ui_ranks_pred *rp);
/* Its rows in the summary: 2 for a race of ranks, else 0. */
int ui_ranks_pred_rows(const ui_ranks_pred *rp);
/* "Predicted (1 thread a rank):" and " 2 ranks 1.09x one rank" (or what it waits for). */
void ui_ranks_pred_draw(ui_lab *lab, const ui_ranks_pred *rp, ui_rect in, int y);

#endif
