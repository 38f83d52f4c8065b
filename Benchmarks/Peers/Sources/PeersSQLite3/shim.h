// SQLite's C API, from the system's libsqlite3-dev (setup.sh installs it).
#include <sqlite3.h>
