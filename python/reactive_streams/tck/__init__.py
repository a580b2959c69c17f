"""The official Reactive Streams TCK (``reactive-streams-tck`` 1.0.4, unmodified) for Python
publishers, subscribers and processors, run on the JVM through the bridge.

    from reactive_streams.tck import PublisherVerification

    class TestMyPublisher(PublisherVerification):
        def create_publisher(self, elements):
            return my_publisher(elements)

pytest collects each upstream ``@Test`` method of the class as its own item (the plugin is
registered by entry point). Or, from a shell: ``python -m reactive_streams.tck module:factory
--kind publisher``.
"""

from ._jars import tck_classpath as tck_classpath
from ._probe import Puppet as Puppet
from ._probe import WhiteboxProbe as WhiteboxProbe
from ._run import BridgePool as BridgePool
from ._run import TckResult as TckResult
from ._run import TckRun as TckRun
from ._run import run_verification as run_verification
from ._verification import FlowPublisherVerification as FlowPublisherVerification
from ._verification import FlowSubscriberBlackboxVerification as FlowSubscriberBlackboxVerification
from ._verification import FlowSubscriberWhiteboxVerification as FlowSubscriberWhiteboxVerification
from ._verification import IdentityFlowProcessorVerification as IdentityFlowProcessorVerification
from ._verification import IdentityProcessorVerification as IdentityProcessorVerification
from ._verification import PublisherVerification as PublisherVerification
from ._verification import SubscriberBlackboxVerification as SubscriberBlackboxVerification
from ._verification import SubscriberWhiteboxVerification as SubscriberWhiteboxVerification

__all__ = [
    "BridgePool",
    "FlowPublisherVerification",
    "FlowSubscriberBlackboxVerification",
    "FlowSubscriberWhiteboxVerification",
    "IdentityFlowProcessorVerification",
    "IdentityProcessorVerification",
    "PublisherVerification",
    "Puppet",
    "SubscriberBlackboxVerification",
    "SubscriberWhiteboxVerification",
    "TckResult",
    "TckRun",
    "WhiteboxProbe",
    "run_verification",
    "tck_classpath",
]
