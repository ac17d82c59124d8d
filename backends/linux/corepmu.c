/*
 * The core PMUs of this host (corepmu.h): read from sysfs, never assumed
 * from the architecture's name for them.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corepmu.h"
#include "util.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pmu_core_pmus(const char *sysfs, char *buf, size_t n)
{
	const char *dir = sysfs ? sysfs : "/sys/bus/event_source/devices";
	char *names[64], path[512];
	int k = 0;
	DIR *d = opendir(dir);

	if (n)
		buf[0] = '\0';
	for (struct dirent *e; d && (e = readdir(d)) && k < 64;) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpus", dir, e->d_name);
		if (!strcmp(e->d_name, "cpu") || access(path, F_OK) == 0)
			if ((names[k] = strdup(e->d_name)))
				k++;
	}
	if (d)
		closedir(d);
	qsort(names, (size_t)k, sizeof(*names), by_name);
	for (int i = 0; i < k; i++) {
		size_t l = n ? strlen(buf) : 0;

		if (n && l + strlen(names[i]) + 2 <= n)
			snprintf(buf + l, n - l, "%s%s", l ? " " : "", names[i]);
		free(names[i]);
	}
	return k;
}

int pmu_online_cpus(int **out)
{
	char *s = NULL, *p;
	int *v = NULL, n = 0, cap = 0;

	if (pmu_read_file(AT_FDCWD, "/sys/devices/system/cpu/online", 4096, &s, NULL))
		return -1;
	for (p = s; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < 65536; c++) {
			if (n == cap) {
				int *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*nv));

				if (!nv) {
					free(v);
					free(s);
					return -1;
				}
				v = nv;
			}
			v[n++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
	}
	free(s);
	*out = v;
	return n;
}
