/** Crash-safe file replacement and streaming little-endian data regions with a CRC32C. */
package org.tensorcache.store.io;
