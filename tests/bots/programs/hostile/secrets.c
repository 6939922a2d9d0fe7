/* Reads what it should not: the machine's secrets, other processes' /proc, the
 * folder above its own (other bots' folders), and the file the test names
 * (argv[1]). Says what it could read, and the first bytes of it, in its info
 * and on stderr. */
#include <dirent.h>
#include <fcntl.h>
#include "hostile.h"

static void try_read(char *info, size_t size, const char *key, const char *path) {
    char data[64] = {0}, value[200];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        report(info, size, key, outcome(fd));
        return;
    }
    ssize_t got = read(fd, data, sizeof data - 1);
    close(fd);
    for (ssize_t i = 0; i < got; i++)
        if (data[i] == '"' || data[i] == '\\' || (unsigned char)data[i] < 32) data[i] = '.';
    snprintf(value, sizeof value, "read %s", got >= 0 ? data : "nothing");
    report(info, size, key, value);
    fprintf(stderr, "%s: %s\n", path, value);
}

static void try_list(char *info, size_t size, const char *key, const char *path) {
    char value[400] = "listed";
    DIR *folder = opendir(path);
    if (folder == NULL) {
        report(info, size, key, outcome(-1));
        return;
    }
    for (struct dirent *entry; (entry = readdir(folder)) != NULL;) {
        size_t used = strlen(value);
        snprintf(value + used, sizeof value - used, " %s", entry->d_name);
    }
    closedir(folder);
    report(info, size, key, value);
    fprintf(stderr, "%s: %s\n", path, value);
}

static void attack(char *info, size_t size) {
    try_read(info, size, "shadow", "/etc/shadow");
    try_read(info, size, "passwd", "/etc/passwd");
    try_read(info, size, "init_environ", "/proc/1/environ");
    try_read(info, size, "own_environ", "/proc/self/environ");
    try_read(info, size, "mountinfo", "/proc/self/mountinfo");
    try_read(info, size, "cgroup", "/proc/self/cgroup");
    try_read(info, size, "secret", g_argv[1]);
    try_list(info, size, "root", "/root");
    try_list(info, size, "home", "/home");
    try_list(info, size, "tmp", "/tmp");
    try_list(info, size, "parent", "..");
    try_list(info, size, "bots", "/dev/shm");
}

static void again(char *info, size_t size) { (void)info; (void)size; }
