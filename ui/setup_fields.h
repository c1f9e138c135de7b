/* ui/setup_fields.h - the setup screen's fields (ui/setup_fields.c). */
#ifndef NNLAB_UI_SETUP_FIELDS_H
#define NNLAB_UI_SETUP_FIELDS_H

#include "ui.h"

#define UI_MAX_BATCH 1048576

void ui_settings_defaults(ui_settings *s);
void ui_settings_from_preset(ui_settings *s, const nn_preset *p);
/* The devices a device choice runs on (one, or two side by side); returns the count. */
int ui_choice_devices(int choice, int out[2]);
int ui_field_is_number(int f);
int ui_field_gpu_only(int f);
void ui_field_text(const ui_lab *lab, int f, char *label, size_t llen, char *value, size_t vlen);
void ui_field_adjust(ui_lab *lab, int f, int dir);
int ui_field_type(ui_lab *lab, int ch);
void ui_field_commit(ui_lab *lab);

#endif
