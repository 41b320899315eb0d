package dev.relock.spring.aot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A small Spring Boot application with a {@code @DistributedLock} bean, built ahead of time by its test. */
@SpringBootApplication
public class AotApplication {

    public static void main(String[] args) {
        SpringApplication.run(AotApplication.class, args);
    }
}
