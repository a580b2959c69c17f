package io.github.rspy.spark.connect;

/** A Connect client's registration (a publisher or a subscriber) told that its name was freed. */
interface Registered {
    /** The client freed the name: end the registration's stream once no query holds it. */
    void unregistered();
}
