package dev.toll.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class BurnTest {
    @ParameterizedTest
    @CsvSource({
        "0, 0",
        "500us, 500000",
        "500µs, 500000",
        "1.5ms, 1500000",
        "2s, 2000000000",
        "1m30s, 90000000000",
        "250ns, 250",
    })
    void parsesDurationsAsGoDoes(String in, long nanos) {
        assertEquals(nanos, Burn.parseDuration("extra-cpu", in));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1", "ms", "1x", "-1ms", "1ms2", "1 ms"})
    void rejectsWhatGoRejects(String in) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Burn.parseDuration("extra-cpu", in));
        assertTrue(e.getMessage().startsWith("extra-cpu: "), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"0, 0", "65536, 65536", "64KiB, 65536", "1MiB, 1048576", "100KB, 100000", "3B, 3"})
    void parsesSizesAsTollAppDoes(String in, int bytes) {
        assertEquals(bytes, Burn.parseSize("extra-alloc", in));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "KiB", "-1", "1.5KiB", "64kib", "4GiB"})
    void rejectsBadSizes(String in) {
        assertThrows(IllegalArgumentException.class, () -> Burn.parseSize("extra-alloc", in));
    }

    @Test
    void rejectsNegativeKnobs() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Burn(-1, -1, 0, 0));
        assertTrue(e.getMessage().contains("work -1 is negative"), e.getMessage());
        assertTrue(e.getMessage().contains("extra-cpu is negative"), e.getMessage());
    }

    @Test
    void logLoopIsTheSumOfLogs() {
        assertEquals(0, Burn.logLoop(0));
        assertEquals(Math.log(2) + Math.log(3), Burn.logLoop(3), 1e-12);
    }

    @Test
    void extraCpuBurnsAtLeastItsTimeOnTheThreadClock() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Burn b = new Burn(0, 20_000_000, 0, 0);
        long start = threads.getCurrentThreadCpuTime();
        b.run();
        long used = threads.getCurrentThreadCpuTime() - start;
        assertTrue(used >= 20_000_000, "burnt " + used + " ns of CPU, want at least 20 ms");
    }

    @Test
    void extraDelaySleepsAtLeastItsTime() {
        Burn b = new Burn(0, 0, 30_000_000, 0);
        long start = System.nanoTime();
        b.run();
        assertTrue(System.nanoTime() - start >= 30_000_000);
    }

    @Test
    void extraAllocRuns() {
        // An odd size, so the last byte is not on a page boundary.
        new Burn(0, 0, 0, 3 * 4096 + 5).run();
    }
}
