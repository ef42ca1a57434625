#include <config.h>
#include <check.h>
#include <stdlib.h>
int main(void) { return 0; }
