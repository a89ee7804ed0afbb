/*
 * planner_hooks.h
 *    Installation of gpuops' planner hooks.
 */
#ifndef GPUOPS_PLANNER_HOOKS_H
#define GPUOPS_PLANNER_HOOKS_H

extern void GpuopsInstallPlannerHooks(void);

#endif
