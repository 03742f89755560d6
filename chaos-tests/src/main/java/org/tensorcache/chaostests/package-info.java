/** Fault injection against real TensorCache node processes. */
package org.tensorcache.chaostests;
