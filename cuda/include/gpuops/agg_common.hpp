/*
 * agg_common.hpp
 *    What the CUDA aggregation and its CPU twin share, so both group and
 *    aggregate identically: the packed group key, the per-aggregate states
 *    and their combine functions (gpuops_device.h describes the algorithm).
 *
 * Its parts, each with its own header, all included here:
 *   agg_key.hpp       the packed group key and the ordered aggregates'
 *                     sub-key (the words the sort orders), percentile rows
 *   agg_strategy.hpp  rows per device budget; whether the hash strategy
 *                     serves, its states' layout and capacity
 *   agg_state.hpp     the states, their combine operators and leaves, and
 *                     their conversions to and from GpuopsAggResult
 */
#ifndef GPUOPS_AGG_COMMON_HPP
#define GPUOPS_AGG_COMMON_HPP

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpuops_device.h"
#include "key_normalize.hpp"

#include "agg_key.hpp"
#include "agg_strategy.hpp"
#include "agg_state.hpp"

#endif /* GPUOPS_AGG_COMMON_HPP */
