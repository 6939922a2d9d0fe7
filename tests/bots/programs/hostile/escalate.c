/* Runs a shell that fetches from the network, and setuid-root programs (su,
 * mount, passwd), to gain what it does not have; reports its own ids and
 * capabilities, and what the shell said its user was. */
#include <sys/wait.h>
#include "hostile.h"

/* What ``command`` printed (its last line), or how it failed to start. */
static void run(char *info, size_t size, const char *key, const char *command) {
    char output[200] = "", line[200];
    FILE *pipe = popen(command, "r");
    if (pipe == NULL) {
        report(info, size, key, outcome(-1));
        return;
    }
    while (fgets(line, sizeof line, pipe)) snprintf(output, sizeof output, "%s", line);
    int status = pclose(pipe);
    for (char *c = output; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = ' ';
    char value[260];
    snprintf(value, sizeof value, "%d %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1, output);
    report(info, size, key, value);
}

static void attack(char *info, size_t size) {
    char line[256];
    report_number(info, size, "uid", getuid());
    report_number(info, size, "euid", geteuid());
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "CapEff:", 7) == 0) report_number(info, size, "cap_eff", (double)strtoull(line + 8, NULL, 16));
    if (status) fclose(status);
    run(info, size, "curl", "/bin/sh -c 'curl -s -m 2 http://1.1.1.1/ 2>&1; echo curl exit $?'");
    run(info, size, "shell_uid", "/bin/sh -c 'id -u'");
    run(info, size, "su", "/usr/bin/su -c 'id -u' root 2>&1; echo su exit $?");
    run(info, size, "mount", "/usr/bin/mount -t tmpfs none /mnt 2>&1; echo mount exit $?");
    run(info, size, "passwd", "/usr/bin/passwd -d root 2>&1; echo passwd exit $?");
}

static void again(char *info, size_t size) { (void)info; (void)size; }
