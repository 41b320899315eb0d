package dev.relock.contract;

import org.junit.jupiter.api.Tag;

/** The contract on Redlock over 5 independent servers (a majority of 3 decides). */
@Tag("redis")
class Redlock5ContractTest extends RedlockDeployment {

    Redlock5ContractTest() {
        super(5);
    }
}
