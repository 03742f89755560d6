/** Fault injection against real TensorCache node processes, with every guarantee checked. */
package org.tensorcache.chaostests;
