package dev.relock.contract;

import dev.relock.RelockClient;
import dev.relock.RelockClientBuilder;
import dev.relock.testredis.RedisServer;
import java.util.ArrayList;
import java.util.List;

/** Redlock over {@link #nodeCount} independent servers, each started by the fixture, none a replica of another. */
abstract class RedlockDeployment extends Deployment {

    private final int nodeCount;
    private final List<RedisServer> nodes = new ArrayList<>();

    RedlockDeployment(int nodeCount) {
        this.nodeCount = nodeCount;
    }

    @Override
    void start() {
        for (int i = 0; i < nodeCount; i++) {
            nodes.add(RedisServer.start());
        }
    }

    @Override
    void stop() {
        nodes.forEach(RedisServer::close);
    }

    @Override
    RelockClientBuilder clientBuilder() {
        return RelockClient.builder().redlockUris(nodes.stream().map(RedisServer::uri).toList());
    }

    @Override
    List<RedisServer> keyHolders() {
        return nodes;
    }

    @Override
    boolean servesSemaphores() {
        return false;
    }

    @Override
    boolean countsReentriesInRedis() {
        return false;
    }

    @Override
    boolean forceUnlockUnderReadersIsReported() {
        return false;
    }

    @Override
    boolean servesCloseArrivalsInExactOrder() {
        return false;
    }

    @Override
    boolean countsWaitingReaders() {
        return false;
    }
}
