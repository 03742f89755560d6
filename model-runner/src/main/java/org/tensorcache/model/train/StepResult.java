package org.tensorcache.model.train;

/**
 * What one DPO step measured, before its update: the mean loss, the share of examples whose
 * implicit reward of the chosen response beats the rejected one's, and the mean reward margin
 * {@code beta * ((pi_c - ref_c) - (pi_r - ref_r))}.
 *
 * @param step the step's number, from 0
 */
public record StepResult(long step, float loss, float rewardAccuracy, float rewardMargin) {}
