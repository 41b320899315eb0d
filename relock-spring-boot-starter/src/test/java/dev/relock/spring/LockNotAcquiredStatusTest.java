package dev.relock.spring;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Issue 17: a web request whose lock was not acquired answered 500. It answers 409 Conflict in Spring MVC and
 * WebFlux, and an application's own exception handler still decides where it has one.
 */
class LockNotAcquiredStatusTest {

    @RestController
    static class Shipping {
        @GetMapping("/orders/{id}/ship")
        String ship(@PathVariable("id") String id) throws NoSuchMethodException {
            throw new LockNotAcquiredException("order:" + id, Shipping.class.getDeclaredMethod("ship", String.class),
                    "was not acquired within 2000 ms", null);
        }
    }

    @RestControllerAdvice
    static class AnswersLocked {
        @ExceptionHandler(LockNotAcquiredException.class)
        ResponseEntity<String> locked(LockNotAcquiredException e) {
            return ResponseEntity.status(HttpStatus.LOCKED).body(e.lockName());
        }
    }

    @Test
    void springMvcAnswersConflict() throws Exception {
        MockMvc mvc = MockMvcBuilders.standaloneSetup(new Shipping()).build();
        mvc.perform(get("/orders/7/ship")).andExpect(status().isConflict());
    }

    @Test
    void webFluxAnswersConflict() {
        WebTestClient.bindToController(new Shipping()).build().get().uri("/orders/7/ship").exchange()
                .expectStatus().isEqualTo(HttpStatus.CONFLICT);
    }

    @Test
    void theApplicationsOwnHandlerDecides() throws Exception {
        MockMvc mvc = MockMvcBuilders.standaloneSetup(new Shipping()).setControllerAdvice(new AnswersLocked()).build();
        mvc.perform(get("/orders/7/ship")).andExpect(status().isLocked());
    }
}
