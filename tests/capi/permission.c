/* No permission for a raw socket (run as an unprivileged user on a real interface):
 * ecrt_request_master returns NULL and one sentence names the fix (root or setcap). */
#include "capi_test.h"

int main(void)
{
    CHECK(ecrt_request_master(0) == NULL);
    return finish("permission");
}
