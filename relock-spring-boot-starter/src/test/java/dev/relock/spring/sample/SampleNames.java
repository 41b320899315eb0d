package dev.relock.spring.sample;

import org.springframework.stereotype.Component;

/** A bean that lock names refer to as {@code @sampleNames}. */
@Component
public class SampleNames {

    public String region() {
        return "eu";
    }
}
