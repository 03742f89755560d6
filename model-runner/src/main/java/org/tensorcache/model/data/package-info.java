/** Preference data: a streaming JSONL reader with digests, and a seeded synthetic generator. */
package org.tensorcache.model.data;
