#!/bin/bash
# doctor on the 'roce-gid-v1' fixture tree (tests/doctor/fixtures/README.md): text and JSON verdicts vs goldens.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
echo 1..7
fixture_test roce-gid-v1 2
exit $((FAILED > 0))
