/* Traces and signals what is outside its sandbox: the processes named by pid in
 * argv[1..] (the referee's process, the spawner), every process it can (-1),
 * and pid 1, which in its own PID namespace is itself. */
#include <signal.h>
#include <sys/ptrace.h>
#include "hostile.h"

static void attack(char *info, size_t size) {
    char key[64];
    for (int i = 1; i < g_argc; i++) {
        pid_t pid = (pid_t)atoi(g_argv[i]);
        snprintf(key, sizeof key, "kill_%d", i);
        report(info, size, key, outcome(kill(pid, SIGTERM)));
        snprintf(key, sizeof key, "ptrace_%d", i);
        report(info, size, key, outcome((int)ptrace(PTRACE_ATTACH, pid, NULL, NULL)));
    }
    report_number(info, size, "pid", getpid());
    report_number(info, size, "parent", getppid());
    report(info, size, "ptrace_1", outcome((int)ptrace(PTRACE_ATTACH, 1, NULL, NULL)));
    report(info, size, "kill_all_stop", outcome(kill(-1, SIGSTOP)));
    report(info, size, "kill_all_kill", outcome(kill(-1, SIGKILL)));
}

static void again(char *info, size_t size) { (void)info; (void)size; }
