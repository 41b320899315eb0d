package dev.relock.contract;

/** The contract on Redlock over 5 independent servers (a majority of 3 decides). */
class Redlock5ContractTest extends RedlockDeployment {

    Redlock5ContractTest() {
        super(5);
    }
}
