/* Nothing configured: ecrt_request_master returns NULL with one sentence on how to configure
 * a link; an interface that does not exist: NULL with one sentence naming it. */
#include <stdlib.h>
#include "capi_test.h"

int main(void)
{
    CHECK(ecrt_request_master(0) == NULL);
    setenv("ECAT_MASTER0", "nosuchif0", 1);
    CHECK(ecrt_request_master(0) == NULL);
    return finish("no_link");
}
