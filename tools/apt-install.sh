#!/bin/sh
# apt-install.sh WHO PACKAGE...: installs the Debian packages named, with
# sudo unless root; says so first, as "WHO: installing ...".
set -eu
who=$1
shift
[ $# -gt 0 ] || exit 0
echo "$who: installing $*"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
