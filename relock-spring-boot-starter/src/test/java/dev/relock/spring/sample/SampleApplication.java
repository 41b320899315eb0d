package dev.relock.spring.sample;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A small application whose beans use {@code @DistributedLock}; its tests run it against a fixture Redis. */
@SpringBootApplication
public class SampleApplication {}
