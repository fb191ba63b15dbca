// FormBox.cpp — FormBox has no code of its own beyond its signal, which moc writes; this file is
// what makes the build run moc on FormBox.h (AUTOMOC finds a header through its source).
#include "ui/app/form/FormBox.h"
