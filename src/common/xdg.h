/* src/common/xdg.h - where nnlab keeps the user's files: the one reading of
 * the XDG base directory variables, for presets and profiles (config),
 * calibrations (cache) and exports (data). */
#ifndef NNLAB_XDG_H
#define NNLAB_XDG_H

#include <stddef.h>

/* Each kind: its variable, and the folder under $HOME the XDG base
 * directory spec gives when the variable is unset. */
typedef enum nn_xdg_kind {
    NN_XDG_CONFIG,               /* $XDG_CONFIG_HOME, else ~/.config */
    NN_XDG_CACHE,                /* $XDG_CACHE_HOME, else ~/.cache */
    NN_XDG_DATA,                 /* $XDG_DATA_HOME, else ~/.local/share */
} nn_xdg_kind;

/* out = <base>/nnlab/<sub> (<base>/nnlab when sub is NULL or ""), base being
 * the kind's variable when it holds an absolute path (the spec says to
 * ignore a relative one), else its folder under $HOME. 0, or -1 when
 * neither variable is usable or the path does not fit in len bytes. */
int nn_xdg_dir(nn_xdg_kind kind, const char *sub, char *out, size_t len);

#endif
