package dev.toll.example;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * toll's Java reference service, the topology and knobs of {@code toll app}
 * on Spring Boot: one jar that runs as the consumer or the provider.
 *
 * <p>Settings are Spring properties, given as arguments
 * ({@code --role=provider --server.port=8081 --work=5000}):
 * <ul>
 * <li>{@code role}: {@code consumer} or {@code provider} (required);
 * <li>{@code work}: Math.log iterations per request (default 20000 for the
 *     consumer, 5000 for the provider, as toll app);
 * <li>{@code extra-cpu}, {@code extra-delay}, {@code extra-alloc}: CPU time
 *     burnt on the thread CPU clock, time slept, bytes allocated and touched
 *     per request ({@code 500us}, {@code 2ms}, {@code 64KiB});
 * <li>the consumer's {@code provider} (the URL it calls) and {@code calls}
 *     (how many times {@code GET /consumer} calls it, one after the other;
 *     default 3). {@code GET /consumer10} always calls it 10 times: with an
 *     agent, 1 server span and 3 or 10 client spans per request.
 * </ul>
 */
@SpringBootApplication
public class Application {
    public static void main(String[] args) {
        SpringApplication.run(Application.class, args);
    }

    /** The burn of each request, from the service's settings. */
    @Bean
    static Burn burn(@Value("${role:}") String role,
                     @Value("${work:}") String work,
                     @Value("${extra-cpu:0}") String extraCpu,
                     @Value("${extra-delay:0}") String extraDelay,
                     @Value("${extra-alloc:0}") String extraAlloc) {
        int defaultWork = switch (role) {
            case "consumer" -> 20000;
            case "provider" -> 5000;
            default -> throw new IllegalArgumentException("role: \"" + role + "\" is neither consumer nor provider (set --role=)");
        };
        int w;
        try {
            w = work.isBlank() ? defaultWork : Integer.parseInt(work.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("work: \"" + work + "\" is not a whole number", e);
        }
        return new Burn(w,
                Burn.parseDuration("extra-cpu", extraCpu),
                Burn.parseDuration("extra-delay", extraDelay),
                Burn.parseSize("extra-alloc", extraAlloc));
    }

    /** GET /health, which answers as soon as the service can serve. */
    @RestController
    static class Health {
        @GetMapping("/health")
        String health() {
            return "ok";
        }
    }
}
