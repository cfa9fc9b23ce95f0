package dev.toll.example;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** The provider: GET /provider burns its CPU and answers. */
@RestController
@ConditionalOnProperty(name = "role", havingValue = "provider")
class Provider {
    private final Burn burn;

    Provider(Burn burn) {
        this.burn = burn;
    }

    @GetMapping(path = "/provider", produces = MediaType.APPLICATION_JSON_VALUE)
    String provider() {
        return "{\"service\":\"provider\",\"result\":" + burn.run() + "}";
    }
}
