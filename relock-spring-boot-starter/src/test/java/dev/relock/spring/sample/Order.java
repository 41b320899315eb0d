package dev.relock.spring.sample;

/** An order, whose id names its lock. */
public record Order(String id) {}
