package dev.toll.example;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestTemplate;

/**
 * toll's Java reference service, the same topology as {@code toll app}: the
 * consumer burns some CPU and calls the provider three times per request
 * (ten on /consumer10, so that overhead per span can be seen); the provider
 * burns some CPU and answers. Both roles are this one jar; the endpoints of
 * the other role answer 404.
 *
 * <p>Settings (Spring properties, e.g. {@code --server.port=8080}):
 * {@code role} (consumer or provider), {@code work} (Math.log iterations per
 * request), {@code provider.url} (the consumer's downstream).
 */
@SpringBootApplication
@RestController
public class Application {
    @Value("${role:consumer}")
    private String role;

    @Value("${work:20000}")
    private int work;

    @Value("${provider.url:http://127.0.0.1:8081/provider}")
    private String providerUrl;

    private final RestTemplate rest;

    public Application(RestTemplate rest) {
        this.rest = rest;
    }

    public static void main(String[] args) {
        SpringApplication.run(Application.class, args);
    }

    /** A RestTemplate over HttpURLConnection, which every agent instruments. */
    @Bean
    static RestTemplate restTemplate() {
        SimpleClientHttpRequestFactory f = new SimpleClientHttpRequestFactory();
        f.setConnectTimeout(5000);
        f.setReadTimeout(10000);
        return new RestTemplate(f);
    }

    @GetMapping("/health")
    public String health() {
        return "ok";
    }

    @GetMapping("/consumer")
    public String consumer(@RequestParam(defaultValue = "3") int calls) {
        return consume(calls);
    }

    @GetMapping("/consumer10")
    public String consumer10() {
        return consume(10);
    }

    @GetMapping("/provider")
    public String provider() {
        requireRole("provider");
        return "{\"work\":" + burn(work) + "}";
    }

    private String consume(int calls) {
        requireRole("consumer");
        double x = burn(work);
        long bytes = 0;
        for (int i = 0; i < calls; i++) {
            String body = rest.getForObject(providerUrl, String.class);
            bytes += body == null ? 0 : body.length();
        }
        return "{\"work\":" + x + ",\"calls\":" + calls + ",\"bytes\":" + bytes + "}";
    }

    private void requireRole(String want) {
        if (!want.equals(role)) {
            throw new org.springframework.web.server.ResponseStatusException(
                    org.springframework.http.HttpStatus.NOT_FOUND, "this service is the " + role);
        }
    }

    /** Burns CPU: the sum of log(i) for i in 1..n, as toll app does. */
    static double burn(int n) {
        double x = 0;
        for (int i = 1; i <= n; i++) {
            x += Math.log(i);
        }
        return x;
    }
}
