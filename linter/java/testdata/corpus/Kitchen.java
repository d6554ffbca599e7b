package fleetkit.sample;

import java.io.*;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.HashMap;
import java.lang.String;
import fleetkit.sample.Other;
import java.util.List;
import static java.lang.Math.max;
import static java.lang.Math.min;
import java.util.concurrent.Callable;
import java.util.function.Function;

/**
 * Uses {@link Callable} and {@linkplain Function#apply(Object) apply}.
 * @see Set
 */
public class Kitchen<T extends Comparable<T> & java.io.Serializable> {
    public static final int good_constant = 1;
    static final String OK_CONSTANT = "x", Bad__One = "y";
    private int Member_Bad;
    private final int okMember = 2;
    protected static int staticField;
    final public int wrongOrder = 3;
    @Deprecated public static void annotatedFirst() {}
    public @Deprecated void annotatedLate() { }
    public @Deprecated int annotatedType() { return 0; }
    int a, b; int c;
    int d;; int e;

    interface Shape { int sides = 3; String Name = "s"; }
    @interface Marker { int VALUE = 1; String value() default "v"; }
    enum Color { RED, Green, BLUE; int x; }
    class inner_class { }

    public Kitchen() {}
    Kitchen(int Param, String okParam) { this(); }
    void Kitchen() { }

    public boolean equals(Object o) { return o == this; }

    void BadMethod(int x_y) {
        int Local_Bad = 1, ok = 2;
        final int FINAL_LOCAL = 3;
        for (int I = 0; I < 10; I++) ;
        for (String S : List.of("a")) { }
        if (x_y > 0) x_y--; else x_y++;
        if(x_y>0){x_y=1;}else{x_y=2;}
        while (x_y < 0) x_y++;
        do x_y++; while (x_y < 5);
        do { } while(x_y < 3);
        try { x_y = 1; } catch (RuntimeException | Error ex) { } finally { }
        synchronized(this) { }
        switch (x_y) { case 1: break; default: ; }
        switch (x_y) {}
        label: for (;;) { break label; }
        x_y = x_y<<2; x_y >>>= 1; x_y = x_y >> 1;
        boolean bb = x_y >= 1 && x_y <= 2 || x_y != 3;
        x_y = bb ? 1 : 2; x_y = bb?1:2;
        Runnable r = () -> {}; Runnable r2 = ()->{ staticField++; };
        Map<String, List<Map<String, Integer>>> nested = new HashMap<>();
        List<? extends Number>[] arr = null;
        Object o = new Object() {{ staticField = 1; }};
        Object o2 = new Object() { int q = 1; };
        int[] ints = {1, 2, 3}, more = new int[] {4};
        String s = "a" + "b"+"c";
        assert x_y > 0 : "msg";
        assert x_y>0:"msg";
        return;
    }

    int compute(int v) { return -v + +v - (v) * v / v % v; }
    Function<Integer, Integer> f = v -> v + 1;
    Callable<List<String>> call = () -> { return null; };
    static { }
    { }
}
class Second {
    public int hashCode() { return 1; }
}
