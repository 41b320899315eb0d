package dev.relock.contract;

import org.junit.jupiter.api.Tag;

/** The contract on Redlock over 3 independent servers (a majority of 2 decides). */
@Tag("redis")
class Redlock3ContractTest extends RedlockDeployment {

    Redlock3ContractTest() {
        super(3);
    }
}
