/* Creates, writes, renames and removes files inside its folder and out of it:
 * its folder, the folder above (other bots'), /tmp, /dev/shm, and the folder
 * the test names (argv[1]). */
#include <fcntl.h>
#include <sys/stat.h>
#include "hostile.h"

static void try_create(char *info, size_t size, const char *key, const char *folder) {
    char path[512];
    snprintf(path, sizeof path, "%s/planted-by-a-bot", folder);
    report(info, size, key, outcome(open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)));
}

static void attack(char *info, size_t size) {
    try_create(info, size, "create_here", ".");
    try_create(info, size, "create_parent", "..");
    try_create(info, size, "create_tmp", "/tmp");
    try_create(info, size, "create_shm", "/dev/shm");
    try_create(info, size, "create_named", g_argv[1]);
    report(info, size, "mkdir", outcome(mkdir("folder", 0755)));
    report(info, size, "symlink", outcome(symlink("/etc/shadow", "link")));
    report(info, size, "fifo", outcome(mkfifo("fifo", 0644)));
    report(info, size, "rename", outcome(rename("bot.toml", "renamed.toml")));
    report(info, size, "unlink", outcome(unlink("bot.toml")));
    report(info, size, "chmod", outcome(chmod("bot.toml", 04777)));
    int fd = open("bot.toml", O_WRONLY | O_APPEND);
    report(info, size, "append_own_file", outcome(fd >= 0 ? (int)write(fd, "#\n", 2) : fd));
    report(info, size, "write_usr", outcome(open("/usr/bin/env", O_WRONLY)));
}

static void again(char *info, size_t size) { (void)info; (void)size; }
