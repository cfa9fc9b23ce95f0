package dev.toll.example;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.server.ResponseStatusException;

/**
 * The consumer: GET /consumer burns its CPU, then calls the provider
 * {@code calls} times, one after the other (GET /consumer10: 10 times), and
 * answers 502 if a call fails, as toll app's consumer does.
 */
@RestController
@ConditionalOnProperty(name = "role", havingValue = "consumer")
class Consumer {
    private final Burn burn;
    private final String provider;
    private final int calls;
    private final RestTemplate rest;

    Consumer(Burn burn,
             @Value("${provider:http://127.0.0.1:8081/provider}") String provider,
             @Value("${calls:3}") int calls) {
        if (calls < 0) {
            throw new IllegalArgumentException("calls " + calls + " is negative");
        }
        this.burn = burn;
        this.provider = provider;
        this.calls = calls;
        // HttpURLConnection (keep-alive), which every agent instruments.
        SimpleClientHttpRequestFactory f = new SimpleClientHttpRequestFactory();
        f.setConnectTimeout(5000);
        f.setReadTimeout(10000);
        this.rest = new RestTemplate(f);
    }

    @GetMapping(path = "/consumer", produces = MediaType.APPLICATION_JSON_VALUE)
    String consumer() {
        return consume(calls);
    }

    @GetMapping(path = "/consumer10", produces = MediaType.APPLICATION_JSON_VALUE)
    String consumer10() {
        return consume(10);
    }

    private String consume(int n) {
        double result = burn.run();
        for (int i = 0; i < n; i++) {
            try {
                rest.getForObject(provider, String.class);
            } catch (RestClientException e) {
                throw new ResponseStatusException(HttpStatus.BAD_GATEWAY,
                        "call " + (i + 1) + " of " + n + " to provider: " + e.getMessage(), e);
            }
        }
        return "{\"service\":\"consumer\",\"calls\":" + n + ",\"result\":" + result + "}";
    }
}
