package dev.relock.contract;

/** The contract on Redlock over 3 independent servers (a majority of 2 decides). */
class Redlock3ContractTest extends RedlockDeployment {

    Redlock3ContractTest() {
        super(3);
    }
}
