/* main.c — placeholder entry point (the CLI is being written). */
#include "xdnn.h"

#include <stdio.h>

int main(void)
{
    printf("xdnn %s\n", XDNN_VERSION_STRING);
    return 0;
}
