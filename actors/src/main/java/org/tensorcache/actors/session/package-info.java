/**
 * Trainer sessions: the deterministic sampler that maps a global step and a rank to example
 * indices, and the sharded, event-sourced {@link org.tensorcache.actors.session.TrainerSession}
 * that records, in a {@link org.tensorcache.actors.session.TrainerSessionState}, how far each rank
 * of a training run has come.
 */
package org.tensorcache.actors.session;
