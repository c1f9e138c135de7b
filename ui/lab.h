/* ui/lab.h - the ncurses lab, what `nnlab` with no arguments opens. */
#ifndef NNLAB_UI_LAB_H
#define NNLAB_UI_LAB_H

/* Runs the lab until the user quits; the terminal is restored on every way
 * out (quit, Ctrl-C, SIGTERM, a crash signal). Returns the exit status:
 * 0, or 1 when the terminal cannot be used. */
int nn_lab_main(void);

#endif
