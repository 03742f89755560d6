/**
 * Persisted blocks: one safetensors file per range, written atomically and checked strictly on
 * read, so a corrupt or foreign file is rejected and never becomes a block.
 */
package org.tensorcache.store.segment;
