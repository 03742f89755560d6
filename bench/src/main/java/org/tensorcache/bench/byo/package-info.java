/**
 * The bring-your-own-model benchmark ({@code bench --only byo}): TensorCache's fill of seeded Qwen2
 * models exported for it, next to TRL's own reference log-prob precompute and a bare DJL loop, each
 * in a process of its own, with examples/s, peak resident memory and the values compared.
 */
package org.tensorcache.bench.byo;
