// libsystemd's daemon API (sd_notify, sd_listen_fds_with_names, sd_is_socket, sd_watchdog_enabled) for subd.
// Provided by libsystemd-dev (pkg-config libsystemd); `make` installs it when missing.
#include <systemd/sd-daemon.h>
